import { Router } from 'express';
import { listAudit } from '../../data/audit-log';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { tokyoTime } from '../format';
import { contextOf, queryText, requireRole, signedInOf } from '../http';
import { sendPage } from '../render';
import { Layout, Pager } from '../views/layout';

const PAGE_SIZE = 50;

/** The organisation's audit log (admins): who did what, on which object, from where, when. */
export function auditPages(deps: OrdersApiDeps): Router {
  const router = Router();
  router.get('/dashboard/audit', requireRole('admin'), async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    const before = queryText(req, 'after');
    const page = await listAudit(deps.database.prisma, signedInOf(req).actor.organisationId, {
      limit: PAGE_SIZE,
      ...(before !== undefined && /^\d{1,19}$/.test(before) ? { beforeId: BigInt(before) } : {}),
    });
    sendPage(
      res,
      <Layout ctx={ctx} title={t.audit.title} section="audit">
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t.common.date}</th>
                <th scope="col">{t.audit.user}</th>
                <th scope="col">{t.audit.action}</th>
                <th scope="col">{t.audit.object}</th>
                <th scope="col">{t.modeLabel}</th>
                <th scope="col">{t.audit.address}</th>
                <th scope="col">{t.audit.detail}</th>
              </tr>
            </thead>
            <tbody>
              {page.rows.map((row) => (
                <tr>
                  <td>{tokyoTime(row.createdAt)}</td>
                  <td>{row.userEmail}</td>
                  <td>
                    <code>{row.action}</code>
                  </td>
                  <td>{row.objectId ?? ''}</td>
                  <td>{row.mode === null ? '' : t.modes[row.mode]}</td>
                  <td>{row.ip ?? ''}</td>
                  <td>
                    <code>{JSON.stringify(row.detail)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {page.rows.length === 0 ? <p>{t.common.none}</p> : null}
        <Pager ctx={ctx} next={page.hasMore ? { after: String(page.rows.at(-1)!.id) } : undefined} />
      </Layout>,
    );
  });
  return router;
}
