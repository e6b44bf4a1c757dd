import { labels } from './labels';
/** The words of the error pages, with a sentence for each API error code a console action can meet. */
export const errorsJa = {
  errors: {
    title: 'できませんでした',
    notFound: 'ページまたは対象が見つかりません。',
    forbidden: 'この操作を行う権限がありません。',
    forbiddenFor: (needed: string, yours: string) =>
      `この操作は「${needed}」以上の役割の人だけが行えます（あなたの役割は「${yours}」です）。必要なら、チームの管理者に役割の変更を頼んでください。`,
    csrf: 'フォームの有効期限が切れたか、正しくない送信です。ページを開き直してもう一度お試しください。',
    unavailable: '処理が混み合っています。少し待ってからもう一度お試しください。',
    internal: '予期しないエラーが起きました。記録されています。',
    codes: labels({
      open_order_with_same_amount: '同じ金額の受付中の注文があるため、この入金は除外できません。先にその注文へ消し込むか、注文をキャンセルしてください。',
      transaction_not_excludable: '確定済みの入金は除外できません。',
      transaction_not_excluded: 'この入金は除外されていません。',
      transaction_not_matchable: 'この入金はこの注文に消し込めません（口座・金額が違う、入金が注文より前、またはすでに確定済み）。',
      order_taken: 'この注文はすでに別の入金で支払い済みです。',
      order_not_open: 'この注文はこの操作ができる状態ではありません（受付中でない、またはショップ連携の注文です）。',
      reverse_window_passed: '確定から24時間以上たっているため、受注システムからは取り消せません。この画面で理由を入力して取り消してください。',
      endpoint_limit_reached: 'Webhookエンドポイントは各モード5つまでです。',
      url_not_allowed: 'このURLには送信できません（httpsで、公開されたアドレスである必要があります）。',
      parameter_invalid: '入力に誤りがあります。',
      parameter_missing: '必要な項目が入力されていません。',
      rate_limited: '操作が多すぎます。少し待ってからお試しください。',
    }),
    details: '詳細',
  },
};

export const errorsEn: typeof errorsJa = {
  errors: {
    title: 'That did not work',
    notFound: 'No such page or object.',
    forbidden: 'You are not allowed to do this.',
    forbiddenFor: (needed, yours) =>
      `Only people with the role "${needed}" or higher can do this (your role is "${yours}"). If you need to, ask an admin of your team to change your role.`,
    csrf: 'The form expired or was not sent from this console. Open the page again and retry.',
    unavailable: 'The service is busy. Wait a moment and retry.',
    internal: 'Something unexpected went wrong. It has been logged.',
    codes: {
      open_order_with_same_amount:
        'An open order with the same amount exists, so this deposit cannot be excluded. Match it to that order or cancel the order first.',
      transaction_not_excludable: 'A confirmed deposit cannot be excluded.',
      transaction_not_excluded: 'This deposit is not excluded.',
      transaction_not_matchable: 'This deposit cannot be matched to that order (another account or amount, deposited before the order, or already decided).',
      order_taken: 'The order has already been paid by another deposit.',
      order_not_open: 'The order is not in a state that allows this (not open, or managed by a shop platform).',
      reverse_window_passed: 'Confirmed more than 24 hours ago: your order system can no longer reverse it. Reverse it on this screen with a reason.',
      endpoint_limit_reached: 'At most 5 webhook endpoints per mode.',
      url_not_allowed: 'Deliveries cannot go to this URL (it must be https and a public address).',
      parameter_invalid: 'Something entered is not right.',
      parameter_missing: 'Something required is missing.',
      rate_limited: 'Too many requests; wait a moment.',
    },
    details: 'Details',
  },
};
