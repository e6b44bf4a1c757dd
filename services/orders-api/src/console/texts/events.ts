import { labels } from './labels';

/** The words of the event pages, and for each event type and each kind of decider what it means to a shop owner. */
export const eventsJa = {
  events: {
    title: 'イベント',
    type: '種類',
    detailTitle: (what: string) => `イベント：${what}`,
    json: '送信されたJSON（開発者向け）',
    open: '詳細',
    types: labels({
      'order.created': '注文の作成',
      'order.updated': '注文の変更',
      'order.paid': '注文の支払い',
      'order.canceled': '注文のキャンセル',
      'order.expired': '注文の期限切れ',
      'order.payment_reversed': '支払いの取り消し',
      'transaction.deposited': '入金',
      'transaction.withdrawn': '出金',
      'transaction.held': '入金の保留',
      'webhook.test': 'Webhookのテスト送信',
    }),
    order: (number: string) => `注文 ${number}`,
    deposit: (name: string) => `${name} からの入金`,
    /** Who decided a payment or a reversal. */
    deciders: labels({ auto: '自動（照合ルール）', shop: 'ショップ連携', api: 'API' }),
    person: (email: string) => email,
    someone: '削除されたメンバー',
    apiKey: 'APIキー（受注システムなど）',
    /** Where a decision came from. */
    triggers: labels({ auto: '自動（照合ルール）', api: 'API', dashboard: '管理画面', shop: 'ショップ連携' }),
  },
};

export const eventsEn: typeof eventsJa = {
  events: {
    title: 'Events',
    type: 'Type',
    detailTitle: (what) => `Event: ${what}`,
    json: 'JSON as delivered (for developers)',
    open: 'Details',
    types: {
      'order.created': 'Order created',
      'order.updated': 'Order changed',
      'order.paid': 'Order paid',
      'order.canceled': 'Order canceled',
      'order.expired': 'Order expired',
      'order.payment_reversed': 'Payment reversed',
      'transaction.deposited': 'Deposit',
      'transaction.withdrawn': 'Withdrawal',
      'transaction.held': 'Deposit held',
      'webhook.test': 'Webhook test',
    },
    order: (number) => `Order ${number}`,
    deposit: (name) => `Deposit from ${name}`,
    deciders: { auto: 'Automatic (matching rules)', shop: 'Shop platform', api: 'API' },
    person: (email) => email,
    someone: 'A removed member',
    apiKey: 'API key (your order system)',
    triggers: { auto: 'Automatic (matching rules)', api: 'API', dashboard: 'Console', shop: 'Shop platform' },
  },
};
