export * from './bank-form';
export * from './corporate';
export * from './normalise';
