export * from './bank-form';
export * from './corporate';
export * from './normalise';
export * from './invisible';
