export * from './client';
export * from './infra';
export * from './system';
export { adminUrl, databaseUrl } from './names';
export * from './merchant';
export * from './openapi-validator';
export * from './plans';
export * from './statements';
export * from './prisma-database';
