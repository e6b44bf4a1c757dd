export declare const TEMPLATE_VARIABLE: string;
export declare function templateDatabase(): string;
export declare function databaseUrl(name: string): string;
export declare function adminUrl(): string;
export declare function baseDatabaseUrl(): string;
export declare function rabbitmqUrl(): string;
export declare function redisUrl(): string;
