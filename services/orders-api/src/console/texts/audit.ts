/** The words of the audit log page. */
export const auditJa = {
  audit: {
    title: '操作履歴',
    user: 'ユーザー',
    action: '操作',
    object: '対象',
    address: 'アドレス',
    detail: '詳細',
  },
};

export const auditEn: typeof auditJa = {
  audit: {
    title: 'Audit log',
    user: 'User',
    action: 'Action',
    object: 'Object',
    address: 'Address',
    detail: 'Detail',
  },
};
