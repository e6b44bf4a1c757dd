export * from './adapters';
export * from './commands';
export * from './views';
export * from './matcher-link';
export * from './shop-orders';
