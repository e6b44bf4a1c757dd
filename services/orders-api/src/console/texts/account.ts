/** The words of the account page: the person's own second factor. */
export const accountJa = {
  account: {
    title: 'アカウント',
    totp: '二段階認証（確認コード）',
    totpOn: '有効です。',
    totpOff: '無効です。',
    totpRequired: 'この組織では管理者に二段階認証が必須です。設定するまで他の画面は使えません。',
    start: '二段階認証を設定',
    secretIntro: '認証アプリにこのキーを登録し、表示された6桁のコードを入力してください。',
    secretKey: 'セットアップキー',
    uri: 'otpauth URI',
    confirm: '有効にする',
    disable: '二段階認証を無効にする',
    enabled: '二段階認証を有効にしました。',
    disabled: '二段階認証を無効にしました。',
  },
};

export const accountEn: typeof accountJa = {
  account: {
    title: 'Account',
    totp: 'Second factor (verification code)',
    totpOn: 'On.',
    totpOff: 'Off.',
    totpRequired: 'This organisation requires a second factor of admins. Set it up to use the other pages.',
    start: 'Set up a second factor',
    secretIntro: 'Add this key to your authenticator app and enter the 6-digit code it shows.',
    secretKey: 'Setup key',
    uri: 'otpauth URI',
    confirm: 'Turn on',
    disable: 'Turn off the second factor',
    enabled: 'The second factor is on.',
    disabled: 'The second factor is off.',
  },
};
