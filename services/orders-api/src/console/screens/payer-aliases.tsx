import type { PayerAlias } from '@pmatch/contracts';
import { ConfirmScreen } from '../components/confirm';
import { Layout, Notice, Table } from '../components/layout';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';

/** The payers people taught, newest first, each with a way to forget it (asked first). */
export function PayerAliasListScreen({ ctx, aliases }: { ctx: ConsoleRequestContext; aliases: PayerAlias[] }) {
  const p = ctx.t.payerAliases;
  const mayForget = ctx.signedIn!.actor.role !== 'viewer';
  return (
    <Layout ctx={ctx} title={p.title} section="deposits">
      {new URLSearchParams(ctx.query).get('done') === 'forgotten' ? <Notice kind="success">{p.forgotten}</Notice> : null}
      <p>{p.intro}</p>
      <Table
        ctx={ctx}
        caption={p.title}
        rows={aliases}
        empty={p.none}
        columns={[
          { header: p.depositorName, cell: (a) => a.depositor_name },
          { header: p.payerName, cell: (a) => a.payer_name },
          { header: p.createdAt, cell: (a) => tokyoTime(new Date(a.created_at)) },
          mayForget && {
            header: ctx.t.common.actions,
            cell: (a) => (
              <a href={`/dashboard/payer-aliases/${a.id}/forget`} aria-label={p.forgetFor(a.depositor_name, a.payer_name)}>
                {p.forget}
              </a>
            ),
          },
        ]}
      />
    </Layout>
  );
}

/** Asks before forgetting a payer. */
export function ForgetPayerAliasScreen({ ctx, alias }: { ctx: ConsoleRequestContext; alias: PayerAlias }) {
  const p = ctx.t.payerAliases;
  return (
    <ConfirmScreen
      ctx={ctx}
      section="deposits"
      question={p.forgetQuestion(alias.depositor_name, alias.payer_name)}
      consequences={p.forgetConsequences}
      action={`/dashboard/payer-aliases/${alias.id}/forget`}
      button={p.forget}
      cancelHref="/dashboard/payer-aliases"
    />
  );
}
