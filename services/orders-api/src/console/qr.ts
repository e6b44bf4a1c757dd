import { toString as qrSvg } from 'qrcode';

/**
 * A QR code of `text` as an SVG image, drawn here on the server (the `qrcode` package), for an
 * `<img src>`: a data: URL, which the console's policy allows for images, so the page needs no
 * script and loads nothing from elsewhere.
 */
export async function qrImage(text: string): Promise<string> {
  const svg = await qrSvg(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
