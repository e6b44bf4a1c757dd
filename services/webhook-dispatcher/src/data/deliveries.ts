/** The dispatcher's deliveries, by concern; its entry point imports them from here. */
export * from './attempts';
export * from './claims';
export * from './endpoints';
export * from './received-events';
export * from './resends';

export * from './backlog';
