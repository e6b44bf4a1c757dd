export interface FaultServers {
  dir: string;
  rabbitNode: string;
  rabbitPort: number;
  rabbitDistPort: number;
  redisPort: number;
}
export declare const VARIABLES: Record<'dir' | 'rabbitNode' | 'rabbitPort' | 'rabbitDistPort' | 'redisPort', string>;
export declare function fromEnvironment(env?: NodeJS.ProcessEnv): FaultServers;
export declare function rabbitUrl(servers: FaultServers): string;
export declare function redisUrl(servers: FaultServers): string;
export declare function rabbitmqctl(servers: FaultServers, args: string[], timeoutMs?: number): Promise<string>;
export declare function startRedis(servers: FaultServers): Promise<void>;
export declare function stopRedis(servers: FaultServers): Promise<void>;
export declare function startServers(): Promise<FaultServers>;
export declare function stopServers(servers: FaultServers): Promise<void>;
