/** What other packages run of bank-ingest in their own process: the operator's statement import (ops). */
export { importStatement, type ImportStatementRequest, type StatementImportView } from './use-cases/import-statement';
export { STATEMENT_FORMATS, type StatementAccount, type StatementFormat } from './domain/statements/statement';
export type { BoundAccount } from './domain/adapter-auth';
