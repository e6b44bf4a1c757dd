#!/usr/bin/env node
import { pushNotification, pushStatement, type Notification } from './adapter';

/**
 * bank-adapter statement FILE [zengin|camt.054|camt.053]
 * bank-adapter notification JSON
 * Environment: BANK_INGEST_URL (e.g. https://ingest.example.jp), ADAPTER_ID (adp_…), ADAPTER_SECRET (whsec_…).
 * Prints bank-ingest's answer; exits 0 on 2xx, 1 otherwise.
 */
async function main(args: string[]): Promise<number> {
  const ingestUrl = process.env.BANK_INGEST_URL;
  const adapterId = process.env.ADAPTER_ID;
  const secret = process.env.ADAPTER_SECRET;
  if (ingestUrl === undefined || adapterId === undefined || secret === undefined) {
    process.stderr.write('set BANK_INGEST_URL, ADAPTER_ID and ADAPTER_SECRET\n');
    return 1;
  }
  const [command, value, format] = args;
  let answer;
  if (command === 'statement' && value !== undefined) {
    answer = await pushStatement({ ingestUrl, adapterId, secret }, value, format as 'zengin' | 'camt.054' | 'camt.053' | undefined);
  } else if (command === 'notification' && value !== undefined) {
    answer = await pushNotification({ ingestUrl, adapterId, secret }, JSON.parse(value) as Notification);
  } else {
    process.stderr.write('usage: bank-adapter statement FILE [FORMAT] | bank-adapter notification JSON\n');
    return 1;
  }
  process.stdout.write(`${JSON.stringify({ status: answer.status, attempts: answer.attempts, body: answer.body })}\n`);
  return answer.status >= 200 && answer.status < 300 ? 0 : 1;
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
