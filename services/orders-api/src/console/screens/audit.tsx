import type { AuditLogRow } from '@pmatch/db';
import { Layout, Pager, Table } from '../components/layout';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';

/** The organisation's audit log: who did what, on which object, from where, when; the recorded codes only on request. */
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
          { header: t.audit.action, cell: (row) => t.audit.actions[row.action] ?? row.action },
          { header: t.audit.object, cell: (row) => <AuditObject ctx={ctx} id={row.objectId} /> },
          { header: t.modeLabel, cell: (row) => (row.mode === null ? '' : t.modes[row.mode]) },
          { header: t.audit.address, cell: (row) => row.ip ?? '' },
          {
            header: t.audit.detail,
            cell: (row) => (
              <details>
                <summary>{t.audit.showDetail}</summary>
                <code>{row.action}</code> <code>{row.objectId ?? ''}</code> <code>{JSON.stringify(row.detail)}</code>
              </details>
            ),
          },
        ]}
      />
      <Pager ctx={ctx} next={hasMore ? { after: String(rows.at(-1)!.id) } : undefined} />
    </Layout>
  );
}

/** A link to the object an action was on, where the console has a page for it. */
function AuditObject({ ctx, id }: { ctx: ConsoleRequestContext; id: string | null }) {
  const a = ctx.t.audit;
  if (id?.startsWith('ord_')) return <a href={`/dashboard/orders/${id}`}>{a.openOrder}</a>;
  if (id?.startsWith('txn_')) return <a href={`/dashboard/deposits/${id}`}>{a.openDeposit}</a>;
  if (id?.startsWith('we_')) return <a href={`/dashboard/webhooks/${id}`}>{a.openEndpoint}</a>;
  return null;
}
