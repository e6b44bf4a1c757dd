/** The words of the event pages. */
export const eventsJa = {
  events: {
    title: 'イベント',
    type: '種類',
    detailTitle: (id: string) => `イベント ${id}`,
    json: '送信されたJSON',
  },
};

export const eventsEn: typeof eventsJa = {
  events: {
    title: 'Events',
    type: 'Type',
    detailTitle: (id) => `Event ${id}`,
    json: 'JSON as delivered',
  },
};
