export * from './adapters';
export * from './commands';
export * from './failures';
export * from './listings';
export * from './views';
export * from './matcher-link';
export * from './shop-orders';
export * from './session';
