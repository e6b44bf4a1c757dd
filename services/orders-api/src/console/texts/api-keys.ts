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
    revoke: '失効させる',
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
    revoke: 'Revoke',
    revokedDone: 'The API key is revoked.',
  },
};
