/** Player version, reported as window.pccstream.version. */
export const PLAYER_VERSION = '0.1.0';
