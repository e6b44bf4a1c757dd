import { createHmac } from 'node:crypto';
import { BankNotification } from '../../../packages/contracts/src/ingest';
import { notificationOfVirtualAccountDeposit, verifyBankSignature, type VirtualAccountDepositMessage } from '../src/virtual-account';

const bankSecret = 'a secret the bank gave the merchant';

const message: VirtualAccountDepositMessage = {
  messageId: '0123456789',
  timestamp: '2026-12-07T10:15:30+09:00',
  account: { raId: '101011234567', raBranchCode: '101', raAccountNumber: '1234567' },
  vaTransaction: {
    vaId: '1010002001',
    transactionDate: '2026-12-07',
    vaBranchCode: '101',
    vaAccountNumber: '2000001',
    depositAmount: '12800',
    remitterNameKana: 'ﾔﾏﾀﾞ ﾊﾅｺ',
    itemKey: '20261207101530123456',
  },
};

describe('a virtual-account deposit pushed by the bank', () => {
  test('when the bank signed the raw body, then it verifies, and a changed body or another secret does not', () => {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const signature = createHmac('sha256', bankSecret).update(body).digest('base64');

    expect(verifyBankSignature(bankSecret, body, signature)).toBe(true);
    expect(verifyBankSignature(bankSecret, Buffer.from(JSON.stringify({ ...message, messageId: '1' })), signature)).toBe(false);
    expect(verifyBankSignature('another secret', body, signature)).toBe(false);
    expect(verifyBankSignature(bankSecret, body, undefined)).toBe(false);
  });

  test('when a deposit message is translated, then it is a notification bank-ingest takes, on the virtual account, keyed by the account and 明細キー', () => {
    const notification = notificationOfVirtualAccountDeposit(message);

    expect(notification).toEqual({
      account: { bank_code: '0310', branch_code: '101', account_type: 'ordinary', account_number: '2000001' },
      bank_reference: 'va:1010002001:20261207101530123456',
      direction: 'deposit',
      amount: 12800,
      counterparty: 'ﾔﾏﾀﾞ ﾊﾅｺ',
      occurred_at: '2026-12-07T01:15:30.000Z',
    });
    expect(BankNotification.safeParse(notification).success).toBe(true);
  });

  test('when a message lacks what a deposit needs, then it is refused, naming each problem', () => {
    const broken = { ...message, vaTransaction: { ...message.vaTransaction, vaAccountNumber: '12', depositAmount: '-5' } };

    expect(() => notificationOfVirtualAccountDeposit(broken)).toThrow('vaAccountNumber must be 7 digits; depositAmount must be a positive whole number');
  });
});
