/** Player version, reported as window.pccstream.version. */
// 0.2.0: a stall is the time the playhead falls behind the clock while the buffer is low.
export const PLAYER_VERSION = '0.2.0';
