import type { TransferTo } from '@pmatch/contracts';
import type { BankAccountRow, OrderRow } from '@pmatch/db';
import type { ConsoleRequestContext } from '../request';
import type { Texts } from '../texts';
import { Facts } from './layout';

/** A bank's or a branch's name with its code, or the code alone when no name is stored. */
export function namedCode(name: string | null, code: string): string {
  return name === null ? code : `${name} (${code})`;
}

/** A bank account on one line, as its owner knows it: bank, branch, account type and number. */
export function bankAccountLine(t: Texts, account: BankAccountRow): string {
  const type = account.accountType === null ? [] : [t.transferTo.accountTypes[account.accountType] ?? account.accountType];
  return [namedCode(account.bankName, account.bankCode), namedCode(account.branchName, account.branchCode), ...type, account.accountNumber].join(' ');
}

/**
 * An order's dedicated transfer account (振込専用口座) as its payment page prints it: bank,
 * branch, account type, the whole number and the holder name, and whom it is given to. Nothing
 * for an order on a shared account.
 */
export function TransferToSection({ ctx, order }: { ctx: ConsoleRequestContext; order: OrderRow }) {
  if (!order.dedicated || order.transferTo === null) return null;
  const w = ctx.t.transferTo;
  const to = order.transferTo as TransferTo;
  return (
    <section aria-labelledby="transfer-to">
      <h2 id="transfer-to">{w.heading}</h2>
      <p class="muted">{w.intro}</p>
      <Facts
        rows={[
          [w.bank, namedCode(to.bank_name, to.bank_code)],
          [w.branch, namedCode(to.branch_name, to.branch_code)],
          [w.accountType, w.accountTypes[to.account_type] ?? to.account_type],
          [w.accountNumber, <code class="account-number">{to.account_number}</code>],
          [w.holderName, to.holder_name],
          [w.givenTo, order.customerReference === null ? w.givenToOrder : w.givenToBuyer(order.customerReference)],
        ]}
      />
    </section>
  );
}
