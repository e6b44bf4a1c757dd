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
  },
};
