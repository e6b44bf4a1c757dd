import type { AuditLogRow } from '@pmatch/db';
import { Layout, Pager, Table } from '../components/layout';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';

/** The organisation's audit log: who did what, on which object, from where, when. */
export function AuditScreen({ ctx, rows, hasMore }: { ctx: ConsoleRequestContext; rows: AuditLogRow[]; hasMore: boolean }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t.audit.title} section="audit">
      <Table
        ctx={ctx}
        caption={t.audit.title}
        rows={rows}
        columns={[
          { header: t.common.date, cell: (row) => tokyoTime(row.createdAt) },
          { header: t.audit.user, cell: (row) => row.userEmail },
          { header: t.audit.action, cell: (row) => <code>{row.action}</code> },
          { header: t.audit.object, cell: (row) => row.objectId ?? '' },
          { header: t.modeLabel, cell: (row) => (row.mode === null ? '' : t.modes[row.mode]) },
          { header: t.audit.address, cell: (row) => row.ip ?? '' },
          { header: t.audit.detail, cell: (row) => <code>{JSON.stringify(row.detail)}</code> },
        ]}
      />
      <Pager ctx={ctx} next={hasMore ? { after: String(rows.at(-1)!.id) } : undefined} />
    </Layout>
  );
}
