/** The words of the page of remembered payers (rule `learned_payer`). */
export const payerAliasesJa = {
  payerAliases: {
    title: '覚えた支払者',
    link: '覚えた支払者の一覧',
    intro: '入金を確定するときに「覚える」を選んだ振込名義です。ルール「覚えた支払者」が有効なら、同じ名義の次の入金はその支払者の注文に一致します。',
    depositorName: '振込名義',
    payerName: '注文の支払者名',
    createdBy: '覚えさせた人',
    createdAt: '日時',
    none: '覚えた支払者はまだありません。',
    forget: '忘れる',
    forgetFor: (depositor: string, payer: string) => `忘れる（${depositor} → ${payer}）`,
    forgetQuestion: (depositor: string, payer: string) => `「${depositor}」を「${payer}」の支払者として忘れますか？`,
    forgetConsequences: ['この名義の次の入金は、覚えた支払者なしで判定されます。', 'すでに確定した入金は変わりません。'],
    forgotten: '支払者を忘れました。',
  },
};

export const payerAliasesEn: typeof payerAliasesJa = {
  payerAliases: {
    title: 'Remembered payers',
    link: 'Remembered payers',
    intro:
      'Depositor names a person chose to remember when confirming a deposit. With the rule "learned payers" on, the next deposit under such a name fits orders of that payer.',
    depositorName: 'Depositor name',
    payerName: "Order's payer name",
    createdBy: 'Remembered by',
    createdAt: 'When',
    none: 'No payer is remembered yet.',
    forget: 'Forget',
    forgetFor: (depositor, payer) => `Forget (${depositor} → ${payer})`,
    forgetQuestion: (depositor, payer) => `Forget "${depositor}" as a payer for "${payer}"?`,
    forgetConsequences: ['The next deposit under this name is decided without it.', 'Deposits already confirmed stay as they are.'],
    forgotten: 'The payer is forgotten.',
  },
};
