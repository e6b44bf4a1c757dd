import { labels } from './labels';
/** The words of the API key page. */
export const apiKeysJa = {
  apiKeys: {
    title: 'APIキー',
    name: '名前',
    permission: '権限',
    permissions: labels({ read_write: '読み書き', read_only: '読み取りのみ' }),
    scope: '口座の範囲',
    allAccounts: 'すべての口座',
    hint: 'キー（末尾）',
    lastUsed: '最終利用',
    never: 'まだ使われていません',
    revoked: '失効',
    issue: 'APIキーを発行',
    issuedTitle: 'APIキーを発行しました',
    shownOnce: 'このキーは今だけ表示されます。安全な場所に保存してください。',
    issuedName: (name: string) => `名前: ${name}`,
    gone: 'APIキーは発行時に一度だけ表示され、もう表示できません。控えていない場合は、このキーを失効させて新しいキーを発行してください。',
    revoke: '失効させる',
    revokeQuestion: (name: string) => `APIキー「${name}」を失効させますか？`,
    revokeConsequences: 'このキーを使うリクエストはすぐに拒否されます（401）。',
    revokedDone: 'APIキーを失効させました。',
  },
};

export const apiKeysEn: typeof apiKeysJa = {
  apiKeys: {
    title: 'API keys',
    name: 'Name',
    permission: 'Permission',
    permissions: { read_write: 'Read and write', read_only: 'Read only' },
    scope: 'Bank accounts',
    allAccounts: 'All accounts',
    hint: 'Key (end)',
    lastUsed: 'Last used',
    never: 'Never used',
    revoked: 'Revoked',
    issue: 'Issue an API key',
    issuedTitle: 'The API key is issued',
    shownOnce: 'This key is shown only now. Store it somewhere safe.',
    issuedName: (name) => `Name: ${name}`,
    gone: 'An API key is shown once, when it is issued, and cannot be shown again. If you did not keep it, revoke it and issue another.',
    revoke: 'Revoke',
    revokeQuestion: (name) => `Revoke the API key "${name}"?`,
    revokeConsequences: 'Requests with this key are refused at once (401).',
    revokedDone: 'The API key is revoked.',
  },
};
