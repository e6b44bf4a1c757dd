/** The words of the overview page. */
export const overviewJa = {
  overview: {
    title: '概要',
    heldWaiting: '確認待ちの入金（保留）',
    unmatchedWaiting: '未消込の入金',
    openOrders: '受付中の注文',
    expiringToday: '今日期限を迎える注文',
    endpointsTrouble: '失敗中・停止中のWebhook',
    latestEvents: '最近のイベント',
    more: (n: string) => `${n}件以上`,
    viewAll: 'すべて見る',
    rulesTitle: 'はじめに: 名前の照合のしかた',
    rulesNow:
      '銀行は振込人名を半角カナで送ります（例: ﾔﾏﾀﾞ ﾀﾛｳ）。いまの設定では、入金の名前は注文の名前と表記まで同じときだけ一致します。「ヤマダ タロウ」や「やまだ たろう」と登録した注文への入金は、確定されずに保留になります。',
    rulesOffer:
      '「カナ・全角半角の違い」を有効にすると、全角と半角、ひらがなとカタカナ、小さいカナ、長音やスペースの違いを無視して比べます。有効にする前に、いま保留中の入金のうちどれが確定されるかを確認できます。',
    rulesPreview: '有効にした場合を確認',
    rulesKeep: 'いまの設定のままにする',
    rulesLater: 'この案内は、誰かが名前の照合ルールを保存するまで管理者に表示されます。設定ページでいつでも変更できます。',
  },
};

export const overviewEn: typeof overviewJa = {
  overview: {
    title: 'Overview',
    heldWaiting: 'Held deposits waiting for you',
    unmatchedWaiting: 'Unmatched deposits',
    openOrders: 'Open orders',
    expiringToday: 'Orders expiring today',
    endpointsTrouble: 'Webhook endpoints failing or switched off',
    latestEvents: 'Latest events',
    more: (n) => `${n} or more`,
    viewAll: 'View all',
    rulesTitle: 'First: how names are compared',
    rulesNow:
      'Banks send the sender’s name in half-width katakana (for example ﾔﾏﾀﾞ ﾀﾛｳ). With the current settings a deposit’s name fits an order only when it is written exactly alike, so a deposit for an order registered as ヤマダ タロウ or やまだ たろう is held, not confirmed.',
    rulesOffer:
      'Turning on “Kana and character widths” compares names regardless of full and half width, hiragana and katakana, small kana, long-vowel marks and spaces. Before turning it on, see which of the deposits held now it would confirm.',
    rulesPreview: 'See what turning it on would do',
    rulesKeep: 'Keep the current settings',
    rulesLater: 'Admins see this until someone saves the name matching rules. The settings page changes them at any time.',
  },
};
