/** The words of the team page. */
export const teamJa = {
  team: {
    title: 'チーム',
    email: 'メールアドレス',
    role: '役割',
    invite: 'メンバーを招待',
    invited: '招待しました。次のリンクを本人に伝えてください（24時間・1回限り）:',
    changeRole: '役割を変更',
    remove: 'メンバーを削除',
    removed: 'メンバーを削除しました。',
    you: '（あなた）',
    totp: '二段階認証',
    passwordSet: 'パスワード設定済み',
    pending: '未設定',
    lastAdmin: '最後の管理者は変更・削除できません。',
  },
};

export const teamEn: typeof teamJa = {
  team: {
    title: 'Team',
    email: 'E-mail address',
    role: 'Role',
    invite: 'Invite a member',
    invited: 'Invited. Give this link to the person (24 hours, once):',
    changeRole: 'Change role',
    remove: 'Remove member',
    removed: 'The member is removed.',
    you: '(you)',
    totp: 'Second factor',
    passwordSet: 'Password set',
    pending: 'Not yet',
    lastAdmin: 'The last admin cannot be changed or removed.',
  },
};
