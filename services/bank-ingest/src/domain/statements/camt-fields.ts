import type { AccountType } from '@pmatch/contracts';
import { tokyoDay } from './booking-time';
import type { StatementAccount } from './statement';
import { isIsoDate } from './wareki';

/** The texts kept, by path below the report (account, summary) or below the entry. */
export const REPORT_PATHS = new Set([
  'Acct/Id/Othr/Id',
  'Acct/Id/IBAN',
  'Acct/Tp/Cd',
  'Acct/Tp/Prtry',
  'Acct/Svcr/FinInstnId/ClrSysMmbId/MmbId',
  'TxsSummry/TtlCdtNtries/NbOfNtries',
  'TxsSummry/TtlCdtNtries/Sum',
  'TxsSummry/TtlDbtNtries/NbOfNtries',
  'TxsSummry/TtlDbtNtries/Sum',
]);
export const ENTRY_PATHS = new Set([
  'Amt',
  'CdtDbtInd',
  'RvslInd',
  'Sts',
  'Sts/Cd',
  'BookgDt/Dt',
  'BookgDt/DtTm',
  'ValDt/Dt',
  'ValDt/DtTm',
  'NtryRef',
  'AcctSvcrRef',
  'AddtlNtryInf',
]);
export const DETAIL_PATHS = new Set([
  'Amt',
  'AmtDtls/TxAmt/Amt',
  'CdtDbtInd',
  'Refs/AcctSvcrRef',
  'Refs/UETR',
  ...['Dbtr', 'UltmtDbtr', 'Cdtr', 'UltmtCdtr'].flatMap((party) => [`RltdPties/${party}/Nm`, `RltdPties/${party}/Pty/Nm`]),
]);

/** How a camt reader refuses a file: the field (a path of local names) and what is wrong. */
export type Fail = (field: string, message: string) => never;

const ACCOUNT_TYPES: Record<string, AccountType> = { CACC: 'current', SVGS: 'savings', ORDINARY: 'ordinary', CURRENT: 'current', SAVINGS: 'savings' };

/** The account of a report: `Acct/Id/Othr/Id` at the bank and branch of `Acct/Svcr/…/ClrSysMmbId/MmbId`. */
export function camtAccount(t: Map<string, string>, fail: Fail): StatementAccount {
  if (t.has('Acct/Id/IBAN')) fail('Acct/Id/IBAN', 'an IBAN does not name a Japanese account; give Acct/Id/Othr/Id');
  const number = t.get('Acct/Id/Othr/Id');
  if (number === undefined || !/^0*[0-9]{1,7}$/.test(number)) fail('Acct/Id/Othr/Id', 'must be the account number (up to 7 digits, zero-padded to at most 10)');
  const member = t.get('Acct/Svcr/FinInstnId/ClrSysMmbId/MmbId');
  if (member === undefined || !/^[0-9]{7}$/.test(member)) {
    fail('Acct/Svcr/FinInstnId/ClrSysMmbId/MmbId', 'must be the 4-digit bank code and 3-digit branch code (7 digits)');
  }
  const typeText = (t.get('Acct/Tp/Cd') ?? t.get('Acct/Tp/Prtry'))?.toUpperCase();
  const accountType = typeText === undefined ? 'ordinary' : ACCOUNT_TYPES[typeText];
  if (accountType === undefined) fail('Acct/Tp', `${typeText} is not an account type imported (CACC current, SVGS savings; ordinary when absent)`);
  return { bankCode: member.slice(0, 4), branchCode: member.slice(4), accountType, accountNumber: number.replace(/^0+/, '').padStart(7, '0') };
}

export function camtAmount(fail: Fail, text: string | undefined, currency: string | undefined, path: string): number {
  if (text === undefined) fail(path, 'is missing');
  if (currency !== undefined && currency !== 'JPY') fail(`${path}/@Ccy`, `is ${currency}; only JPY is imported`);
  const match = /^([0-9]{1,15})(\.0*)?$/.exec(text);
  if (match === null) fail(path, `${text.slice(0, 40)} is not a whole number of yen`);
  const amount = Number(match[1]);
  if (amount <= 0) fail(path, 'must be more than 0');
  return amount;
}

export function creditIndicator(fail: Fail, text: string | undefined, path: string): boolean {
  if (text !== 'CRDT' && text !== 'DBIT') fail(path, 'must be CRDT or DBIT');
  return text === 'CRDT';
}

/** The booking day (the value day when earlier, or alone), and the exact time when DtTm gives one. */
export function bookingOf(t: Map<string, string>, receivedAt: Date, fail: Fail): { day: string; at?: Date } {
  const dayOf = (dateText: string | undefined, timeText: string | undefined, path: string): { day: string; at?: Date } | undefined => {
    if (dateText !== undefined) {
      if (!isIsoDate(dateText)) fail(`${path}/Dt`, `${dateText.slice(0, 40)} is not a date`);
      return { day: dateText };
    }
    if (timeText === undefined) return undefined;
    const withZone = /(Z|[+-][0-9]{2}:[0-9]{2})$/.test(timeText) ? timeText : `${timeText}+09:00`;
    const at = new Date(withZone);
    if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}T/.test(timeText) || Number.isNaN(at.getTime()) || !isIsoDate(timeText.slice(0, 10))) {
      fail(`${path}/DtTm`, `${timeText.slice(0, 40)} is not a date and time`);
    }
    return { day: tokyoDay(at), at };
  };
  const booked = dayOf(t.get('BookgDt/Dt'), t.get('BookgDt/DtTm'), 'Ntry/BookgDt');
  const value = dayOf(t.get('ValDt/Dt'), t.get('ValDt/DtTm'), 'Ntry/ValDt');
  // A booked entry some banks send with its value date alone: that day is the one there is.
  if (booked === undefined && value === undefined) fail('Ntry/BookgDt', 'is missing, and so is ValDt');
  if (booked === undefined) return value!.at !== undefined && value!.at > receivedAt ? { day: value!.day } : value!;
  if (value !== undefined && value.day < booked.day) return { day: value.day };
  return booked.at !== undefined && booked.at > receivedAt ? { day: booked.day } : booked;
}

export function counterpartyOf(t: Map<string, string>, deposit: boolean): string | undefined {
  const parties = deposit ? ['Dbtr', 'UltmtDbtr'] : ['Cdtr', 'UltmtCdtr'];
  for (const party of parties) {
    const name = t.get(`RltdPties/${party}/Pty/Nm`) ?? t.get(`RltdPties/${party}/Nm`);
    if (name !== undefined && name !== '')
      return name
        .replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 140);
  }
  return undefined;
}
