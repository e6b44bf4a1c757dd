export declare const TEMPLATE_VARIABLE: string;
export declare function templateDatabase(): string;
export declare function databaseUrl(name: string): string;
export declare function adminUrl(): string;
