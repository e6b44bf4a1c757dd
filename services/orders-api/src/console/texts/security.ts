/** Words shared by the console's sensitive actions: typing the password or a code again, asking first, secrets shown once. */
export const securityJa = {
  security: {
    passwordAgain: 'パスワードを再入力',
    codeAgain: '認証アプリの確認コード（6桁）またはリカバリーコード',
    wrongPassword: 'パスワードが正しくありません。',
    wrongCode: 'コードが正しくありません。',
    reentryThrottled: '入力の誤りが続いたため、この操作はしばらくできません。15分ほど待ってからもう一度お試しください。',
    unavailable: '現在この操作を受け付けられません。しばらくしてからもう一度お試しください。',
    confirmTitle: '操作の確認',
    cannotUndo: 'この操作は取り消せません。',
    shownOnceGone: 'この内容は一度だけ表示され、もう表示できません。',
  },
};

export const securityEn: typeof securityJa = {
  security: {
    passwordAgain: 'Your password, again',
    codeAgain: 'A code from your authenticator app (6 digits) or a recovery code',
    wrongPassword: 'The password is not right.',
    wrongCode: 'The code is not right.',
    reentryThrottled: 'Too many wrong entries: this action is paused. Wait about 15 minutes and try again.',
    unavailable: 'This action cannot be accepted right now. Try again shortly.',
    confirmTitle: 'Please confirm',
    cannotUndo: 'This cannot be undone.',
    shownOnceGone: 'This was shown once and cannot be shown again.',
  },
};
