import type { MatchingRule } from '@pmatch/contracts';
import { labels } from './labels';
/** The words of the settings page: auto-confirmation, the matching rules and their preview, security. */
export const settingsJa = {
  settings: {
    title: '設定',
    autoConfirm: '後から登録された注文に一致する入金を自動で確定する',
    autoConfirmHelp: '無効のときは保留になり、人が確認します。',
    rules: '名義照合ルール',
    rulesHelp: '有効にしたルールで名義の揺れを許容します。切り替える前に、いま保留中の入金のうちどれが確定されるかを確認できます。',
    ruleNames: labels<MatchingRule>({
      kana_width: 'カナ・全角半角の違い',
      corporate_abbreviation: '法人略語（カ）、(株) など）',
      decorated: '振込番号などの付加文字',
      truncated: '銀行による名義の切り詰め',
      learned_payer: '覚えた支払者（確定のときに覚えた振込人名）',
      transfer_code: '振込コード（注文ごとの7桁の番号）',
      dedicated_account: '専用口座（注文やお客さまごとの振込先口座）',
    }),
    preview: '変更の影響を確認',
    previewTitle: 'ルール変更のプレビュー',
    previewIntro: 'この変更を適用すると、いま保留中の次の入金が、表示の注文で確定されます。どれも、入金を自動で確定するときと同じ名義の照合で選ばれています。',
    previewNone: 'この変更で確定される保留中の入金はありません。',
    previewLeftOut: '一度に確認できる件数を超えたため、一部だけ表示しています。適用後にもう一度確認してください。',
    examined: (n: string) => `確認した保留中の入金: ${n}件`,
    apply: 'この内容で適用',
    applied: (n: string) => `ルールを変更しました。${n}件の入金を確定しました。`,
    leftHeld: (n: string) => `${n}件は状況が変わったため保留のままです。`,
    security: 'セキュリティ',
    requireAdminTotp: '管理者に二段階認証（確認コード）を必須にする',
    saved: '設定を保存しました。',
  },
};

export const settingsEn: typeof settingsJa = {
  settings: {
    title: 'Settings',
    autoConfirm: 'Confirm deposits that fit an order registered later automatically',
    autoConfirmHelp: 'When off, such deposits are held for a person.',
    rules: 'Name matching rules',
    rulesHelp: 'Enabled rules let a name fit despite how banks write it. Before switching one, see which held deposits would be confirmed.',
    ruleNames: {
      kana_width: 'Kana and character widths',
      corporate_abbreviation: 'Corporate abbreviations (ｶ), (株) …)',
      decorated: 'Numbers added by a bank or payer',
      truncated: 'Names cut by the bank',
      learned_payer: 'Remembered payers (names taught when confirming)',
      transfer_code: 'Transfer codes (the seven digits of each order)',
      dedicated_account: 'Dedicated accounts (an account per order or customer)',
    },
    preview: 'Preview the change',
    previewTitle: 'Preview of the rule change',
    previewIntro:
      'Applying this change confirms these held deposits for the orders shown. Each was chosen by the same name matching that confirms deposits automatically.',
    previewNone: 'This change confirms none of the held deposits.',
    previewLeftOut: 'More deposits would be confirmed than one preview shows; preview again after applying.',
    examined: (n) => `Held deposits examined: ${n}`,
    apply: 'Apply this change',
    applied: (n) => `The rules are changed; ${n} deposits were confirmed.`,
    leftHeld: (n) => `${n} stay held: they changed since the preview.`,
    security: 'Security',
    requireAdminTotp: 'Require a verification code (second factor) of admins',
    saved: 'The settings are saved.',
  },
};
