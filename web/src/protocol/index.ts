export * from './constants';
export * from './errors';
export * from './hex';
export * from './request';
export * from './response';
export * from './telemetry';
export * from './live';
export * from './live-datagrams';
