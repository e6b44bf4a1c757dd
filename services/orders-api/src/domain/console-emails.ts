/** An e-mail of the console, queued for the webhook dispatcher to send (docs/decisions/0153-console-mail-through-the-dispatcher.md). */
export interface ConsoleEmail {
  kind: 'console_invitation' | 'console_password_reset' | 'console_access_reset';
  recipient: string;
  subject: string;
  body: string;
}

/** Tokyo time with its offset, as the console writes it. */
const tokyo = (at: Date) => `${new Intl.DateTimeFormat('sv-SE', { timeZone: 'Asia/Tokyo', dateStyle: 'short', timeStyle: 'short' }).format(at)} (+09:00)`;

/** Japanese first, then English: the console's people read one of them, and the sender cannot know which. */
const both = (ja: string[], en: string[]) => [...ja, '', '----', '', ...en].join('\n');

const ROLE_NAMES: Record<string, { ja: string; en: string }> = {
  admin: { ja: '管理者', en: 'admin' },
  operator: { ja: '担当者', en: 'operator' },
  viewer: { ja: '閲覧者', en: 'viewer' },
};

/** An invitation to an organisation's console, with its one-time link. */
export function invitationEmail(to: { email: string; organisationName: string; role: string }, link: { url: string; expiresAt: Date }): ConsoleEmail {
  const role = ROLE_NAMES[to.role] ?? { ja: to.role, en: to.role };
  return {
    kind: 'console_invitation',
    recipient: to.email,
    subject: `入金消込コンソールへの招待 / Invitation to the deposit matching console: ${to.organisationName}`,
    body: both(
      [
        `${to.organisationName} の入金消込コンソールに招待されました（役割: ${role.ja}）。`,
        '次のリンクを開いてパスワードを設定してください。リンクは1回だけ使え、次の時刻まで有効です:',
        tokyo(link.expiresAt),
        '',
        link.url,
        '',
        '心当たりがない場合は、このメールを無視してください。',
      ],
      [
        `You are invited to the deposit matching console of ${to.organisationName} (role: ${role.en}).`,
        `Open this link to set your password. It works once, until ${tokyo(link.expiresAt)}:`,
        '',
        link.url,
        '',
        'If you did not expect this, ignore this e-mail.',
      ],
    ),
  };
}

/** The link a person asked for on the log-in page because they forgot their password. */
export function passwordResetEmail(to: { email: string }, link: { url: string; expiresAt: Date }): ConsoleEmail {
  return {
    kind: 'console_password_reset',
    recipient: to.email,
    subject: 'パスワードの再設定 / Reset your password: deposit matching console',
    body: both(
      [
        '入金消込コンソールのパスワード再設定が依頼されました。',
        `次のリンクから新しいパスワードを設定してください。リンクは1回だけ使え、${tokyo(link.expiresAt)} まで有効です:`,
        '',
        link.url,
        '',
        '二段階認証を設定している場合、ログインには引き続き確認コードが必要です。',
        '依頼していない場合は、このメールを無視してください。パスワードは変わりません。',
      ],
      [
        'Someone asked to reset your password for the deposit matching console.',
        `Set a new password with this link. It works once, until ${tokyo(link.expiresAt)}:`,
        '',
        link.url,
        '',
        'If you use a second factor, logging in still needs its code.',
        'If you did not ask for this, ignore this e-mail: your password stays as it is.',
      ],
    ),
  };
}

/** Tells a person that an admin reset their access, with the new one-time link. */
export function accessResetEmail(to: { email: string; organisationName: string }, link: { url: string; expiresAt: Date }): ConsoleEmail {
  return {
    kind: 'console_access_reset',
    recipient: to.email,
    subject: `アクセスの再設定 / Your console access was reset: ${to.organisationName}`,
    body: both(
      [
        `${to.organisationName} の管理者が、入金消込コンソールへのあなたのアクセスを再設定しました。`,
        'パスワードと二段階認証は削除され、すべてのセッションが終了しました。',
        `次のリンクから新しいパスワードを設定してください。リンクは1回だけ使え、${tokyo(link.expiresAt)} まで有効です:`,
        '',
        link.url,
        '',
        '心当たりがない場合は、組織の管理者に連絡してください。',
      ],
      [
        `An admin of ${to.organisationName} reset your access to the deposit matching console.`,
        'Your password and second factor were removed and every session ended.',
        `Set a new password with this link. It works once, until ${tokyo(link.expiresAt)}:`,
        '',
        link.url,
        '',
        'If you did not expect this, contact an admin of your organisation.',
      ],
    ),
  };
}
