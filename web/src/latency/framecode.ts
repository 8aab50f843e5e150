/**
 * Reading the binary frame code burned into every frame (layout: server/pccstream/media/synth.py).
 *
 * Two rows of 24 blocks at the top left, block size b = H / 15 of the decoded picture; column i
 * carries bit (23 − i); row 0 is white for a 1, row 1 is its complement. A reader samples each
 * block's middle and requires every pair to differ clearly, so any other picture reads as null.
 */

export const CODE_BITS = 24;
export const CODE_BLOCKS_PER_HEIGHT = 15;
/** A pair of blocks must differ by at least this much luma (0–255) to count as a code. */
export const MIN_CONTRAST = 60;
/** The reader scales the code area to this many canvas pixels per block (side). */
export const PIXELS_PER_BLOCK = 4;

/** Canvas size holding the scaled code area. */
export const CODE_CANVAS_WIDTH = CODE_BITS * PIXELS_PER_BLOCK;
export const CODE_CANVAS_HEIGHT = 2 * PIXELS_PER_BLOCK;

function luma(rgba: ArrayLike<number>, offset: number): number {
  return 0.299 * (rgba[offset] ?? 0) + 0.587 * (rgba[offset + 1] ?? 0) + 0.114 * (rgba[offset + 2] ?? 0);
}

/** Mean luma of the middle 2×2 pixels of block (column, row) in the scaled code image. */
function blockLuma(rgba: ArrayLike<number>, column: number, row: number): number {
  const half = PIXELS_PER_BLOCK / 2;
  const x0 = column * PIXELS_PER_BLOCK + half - 1;
  const y0 = row * PIXELS_PER_BLOCK + half - 1;
  let sum = 0;
  for (let dy = 0; dy < 2; dy++) {
    for (let dx = 0; dx < 2; dx++) {
      sum += luma(rgba, ((y0 + dy) * CODE_CANVAS_WIDTH + x0 + dx) * 4);
    }
  }
  return sum / 4;
}

/**
 * The code from an RGBA image of the code area scaled to CODE_CANVAS_WIDTH × CODE_CANVAS_HEIGHT
 * (what `ImageData.data` holds), or null when the picture carries no code.
 */
export function decodeCodeImage(rgba: ArrayLike<number>): number | null {
  if (rgba.length < CODE_CANVAS_WIDTH * CODE_CANVAS_HEIGHT * 4) return null;
  let value = 0;
  for (let column = 0; column < CODE_BITS; column++) {
    const top = blockLuma(rgba, column, 0);
    const bottom = blockLuma(rgba, column, 1);
    if (Math.abs(top - bottom) < MIN_CONTRAST) return null;
    value = value * 2 + (top > bottom ? 1 : 0);
  }
  return value;
}

/** Inverse of decodeCodeImage (tests, and the WebRTC sender stamping its canvas). */
export function encodeCodeImage(code: number): Uint8ClampedArray {
  const out = new Uint8ClampedArray(CODE_CANVAS_WIDTH * CODE_CANVAS_HEIGHT * 4);
  for (let column = 0; column < CODE_BITS; column++) {
    const bit = Math.floor(code / 2 ** (CODE_BITS - 1 - column)) % 2;
    for (let row = 0; row < 2; row++) {
      const white = row === 0 ? bit === 1 : bit === 0;
      for (let y = row * PIXELS_PER_BLOCK; y < (row + 1) * PIXELS_PER_BLOCK; y++) {
        for (let x = column * PIXELS_PER_BLOCK; x < (column + 1) * PIXELS_PER_BLOCK; x++) {
          const o = (y * CODE_CANVAS_WIDTH + x) * 4;
          out.fill(white ? 255 : 0, o, o + 3);
          out[o + 3] = 255;
        }
      }
    }
  }
  return out;
}

/** Source rectangle of the code area in a picture `height` pixels high. */
export function codeArea(height: number): { width: number; height: number } {
  const b = height / CODE_BLOCKS_PER_HEIGHT;
  return { width: CODE_BITS * b, height: 2 * b };
}

/** Draws a frame's code area into a small canvas and decodes it. */
export class FrameCodeReader {
  private readonly ctx: CanvasRenderingContext2D;

  constructor(doc: Document = document) {
    const canvas = doc.createElement('canvas');
    canvas.width = CODE_CANVAS_WIDTH;
    canvas.height = CODE_CANVAS_HEIGHT;
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    if (ctx === null) throw new Error('no 2D canvas context for reading frame codes');
    this.ctx = ctx;
  }

  /** The code of what `source` shows now (a video element, canvas or VideoFrame), or null. */
  read(source: CanvasImageSource, sourceHeight: number): number | null {
    if (sourceHeight <= 0) return null;
    const area = codeArea(sourceHeight);
    this.ctx.drawImage(source, 0, 0, area.width, area.height, 0, 0, CODE_CANVAS_WIDTH, CODE_CANVAS_HEIGHT);
    return decodeCodeImage(this.ctx.getImageData(0, 0, CODE_CANVAS_WIDTH, CODE_CANVAS_HEIGHT).data);
  }
}

/** Stamps a code over the code area of a canvas being captured (the WebRTC sender). */
export function stampCode(ctx: CanvasRenderingContext2D, code: number, height: number): void {
  const b = height / CODE_BLOCKS_PER_HEIGHT;
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, Math.round(CODE_BITS * b), Math.round(2 * b));
  ctx.fillStyle = '#fff';
  for (let column = 0; column < CODE_BITS; column++) {
    const bit = Math.floor(code / 2 ** (CODE_BITS - 1 - column)) % 2;
    const x0 = Math.round(column * b);
    const x1 = Math.round((column + 1) * b);
    const y = bit === 1 ? 0 : Math.round(b);
    ctx.fillRect(x0, y, x1 - x0, Math.round((bit === 1 ? 1 : 2) * b) - y);
  }
}
