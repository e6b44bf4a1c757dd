import { ACCOUNT_TYPES } from '@pmatch/contracts';
import {
  DEDICATED_ACCOUNTS_FORM_FIELDS,
  type DedicatedAccountState,
  type DedicatedAccountsAddition,
  type DedicatedAccountsForm,
  type DedicatedAccountsProblem,
} from '../../domain/dedicated-accounts';
import type { DedicatedAccountListed } from '../../data/dedicated-accounts';
import { ConfirmScreen, PasswordAgainField } from '../components/confirm';
import { Facts, Layout, Notice, PostForm, Table } from '../components/layout';
import { namedCode } from '../components/transfer-to';
import { numberText } from '../format';
import type { ConsoleRequestContext } from '../request';

const STATES: readonly DedicatedAccountState[] = ['free', 'order', 'buyer', 'resting'];

export const EMPTY_DEDICATED_ACCOUNTS_FORM: DedicatedAccountsForm = {
  bank_code: '',
  bank_name: '',
  branch_code: '',
  branch_name: '',
  account_type: 'ordinary',
  holder_name: '',
  first_number: '',
  count: '',
  numbers: '',
};

/** What a refused form says: the problems of its fields, or numbers already registered. */
export type DedicatedAccountsRefusal = { problems: { problem: DedicatedAccountsProblem; line?: number }[] } | { alreadyRegistered: string[] };

/**
 * The dedicated transfer accounts of the session's mode: how many stand in each state and the
 * accounts by number with whom each was last given to; in live mode, for admins, the form that
 * adds accounts (its answer is a confirmation first). Test mode's pool is shown, never added to.
 */
export function DedicatedAccountsScreen({
  ctx,
  pool,
  form = EMPTY_DEDICATED_ACCOUNTS_FORM,
  refused,
}: {
  ctx: ConsoleRequestContext;
  pool: { accounts: DedicatedAccountListed[]; counts: Record<DedicatedAccountState, number>; total: number };
  form?: DedicatedAccountsForm;
  refused?: DedicatedAccountsRefusal | undefined;
}) {
  const { t, language } = ctx;
  const d = t.dedicatedAccounts;
  const w = t.transferTo;
  const signedIn = ctx.signedIn!;
  const params = new URLSearchParams(ctx.query);
  return (
    <Layout ctx={ctx} title={d.title} section="settings">
      {params.get('done') === 'added' ? <Notice kind="success">{d.added(numberText(Number(params.get('count') ?? 0), language))}</Notice> : null}
      <p class="muted">{d.intro}</p>
      {signedIn.mode === 'test' ? <Notice kind="info">{d.testPool}</Notice> : null}
      <section aria-labelledby="pool-counts">
        <h2 id="pool-counts">{d.counts}</h2>
        <Facts
          rows={[
            ...STATES.map((state): [string, string] => [d.states[state], numberText(pool.counts[state], language)]),
            [d.total, numberText(pool.total, language)],
          ]}
        />
      </section>
      <section aria-labelledby="pool-list">
        <h2 id="pool-list">{d.list}</h2>
        {pool.accounts.length < pool.total ? (
          <p class="muted">{d.listedFirst(numberText(pool.accounts.length, language), numberText(pool.total, language))}</p>
        ) : null}
        <Table
          ctx={ctx}
          caption={d.list}
          rows={pool.accounts}
          empty={d.none}
          columns={[
            { header: w.bank, cell: (a) => namedCode(a.bankName, a.bankCode) },
            { header: w.branch, cell: (a) => namedCode(a.branchName, a.branchCode) },
            { header: w.accountType, cell: (a) => w.accountTypes[a.accountType] ?? a.accountType },
            { header: w.accountNumber, cell: (a) => <code class="account-number">{a.accountNumber}</code> },
            { header: w.holderName, cell: (a) => a.holderName },
            { header: d.state, cell: (a) => d.states[a.state] },
            {
              header: d.givenTo,
              cell: (a) => (
                <>
                  {a.orderId !== null && a.state !== 'free' ? <a href={`/dashboard/orders/${a.orderId}`}>{d.order(a.orderExternalId ?? a.orderId)}</a> : null}
                  {a.customerReference !== null ? <> {d.customer(a.customerReference)}</> : null}
                </>
              ),
            },
          ]}
        />
      </section>
      {signedIn.mode === 'live' ? <AddForm ctx={ctx} form={form} refused={refused} /> : null}
    </Layout>
  );
}

function AddForm({ ctx, form, refused }: { ctx: ConsoleRequestContext; form: DedicatedAccountsForm; refused: DedicatedAccountsRefusal | undefined }) {
  const { t, language } = ctx;
  const d = t.dedicatedAccounts;
  const admin = ctx.signedIn!.actor.role === 'admin';
  return (
    <section aria-labelledby="add">
      <h2 id="add">{d.add}</h2>
      {!admin ? (
        <p class="muted">{d.adminOnly}</p>
      ) : (
        <>
          <p class="muted">{d.addHelp}</p>
          {refused !== undefined && 'problems' in refused ? (
            <Notice kind="error">
              {refused.problems.map((p) => (
                <span class="problem">
                  {d.problems[p.problem]}
                  {p.line === undefined ? '' : d.line(numberText(p.line, language))}{' '}
                </span>
              ))}
            </Notice>
          ) : null}
          {refused !== undefined && 'alreadyRegistered' in refused ? (
            <Notice kind="error">
              {d.alreadyRegistered(`${refused.alreadyRegistered.slice(0, 50).join(', ')}${refused.alreadyRegistered.length > 50 ? ', …' : ''}`)}
            </Notice>
          ) : null}
          <PostForm ctx={ctx} action="/dashboard/settings/dedicated-accounts/confirm" class="form-grid">
            <TextField label={d.bankCode} name="bank_code" value={form.bank_code} numeric />
            <TextField label={d.bankName} name="bank_name" value={form.bank_name} />
            <TextField label={d.branchCode} name="branch_code" value={form.branch_code} numeric />
            <TextField label={d.branchName} name="branch_name" value={form.branch_name} />
            <label>
              {d.accountType}
              <select name="account_type">
                {ACCOUNT_TYPES.map((type) => (
                  <option value={type} selected={form.account_type === type}>
                    {t.transferTo.accountTypes[type]}
                  </option>
                ))}
              </select>
            </label>
            <TextField label={d.holderName} name="holder_name" value={form.holder_name} />
            <TextField label={d.firstNumber} name="first_number" value={form.first_number} numeric />
            <TextField label={d.count} name="count" value={form.count} numeric />
            <label>
              {d.numbers}
              <textarea name="numbers" rows={6} spellcheck={false}>
                {form.numbers}
              </textarea>
            </label>
            <button type="submit">{d.next}</button>
          </PostForm>
        </>
      )}
    </section>
  );
}

function TextField({ label, name, value, numeric = false }: { label: string; name: string; value: string; numeric?: boolean }) {
  return (
    <label>
      {label}
      <input name={name} value={value} inputMode={numeric ? 'numeric' : undefined} autoComplete="off" spellcheck={false} />
    </label>
  );
}

/**
 * Asks before adding: how many accounts, the first and last numbers, the bank and the holder, with
 * the admin's password again; the form carries what was typed, and is read again when it is sent.
 */
export function ConfirmDedicatedAccountsScreen({
  ctx,
  form,
  addition,
  problem,
}: {
  ctx: ConsoleRequestContext;
  form: DedicatedAccountsForm;
  addition: DedicatedAccountsAddition;
  problem?: string | undefined;
}) {
  const { t, language } = ctx;
  const d = t.dedicatedAccounts;
  const numbers = addition.accountNumbers;
  const first = numbers[0]!;
  const last = numbers[numbers.length - 1]!;
  return (
    <ConfirmScreen
      ctx={ctx}
      section="settings"
      question={d.confirmQuestion(numberText(numbers.length, language))}
      consequences={[
        numbers.length === 1 ? d.confirmOne(first) : d.confirmRange(first, last),
        d.confirmBank(
          namedCode(addition.bankName, addition.bankCode),
          namedCode(addition.branchName, addition.branchCode),
          t.transferTo.accountTypes[addition.accountType] ?? addition.accountType,
        ),
        d.confirmHolder(addition.holderName),
        d.confirmWarning,
      ]}
      action="/dashboard/settings/dedicated-accounts"
      button={d.confirmButton}
      cancelHref="/dashboard/settings/dedicated-accounts"
      problem={problem}
    >
      {DEDICATED_ACCOUNTS_FORM_FIELDS.map((name) => (
        <input type="hidden" name={name} value={form[name]} />
      ))}
      <PasswordAgainField ctx={ctx} />
    </ConfirmScreen>
  );
}
