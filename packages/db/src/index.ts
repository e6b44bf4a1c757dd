export * from './client';
export * from './events';
export * from './keys';
export * from './migrate';
export * from './orders';
export * from './rows';
export * from './sql';
export * from './views';
