/**
 * Feeds a LatencyTracker from a <video> element: for every frame the compositor presents
 * (requestVideoFrameCallback), read the burned-in code and note the presentation time.
 */

import { FrameCodeReader } from './framecode';
import type { LatencyTracker } from './latency';

export function watchFrameCodes(video: HTMLVideoElement, tracker: LatencyTracker): () => void {
  const reader = new FrameCodeReader(video.ownerDocument);
  let stopped = false;
  let handle = 0;
  const onFrame = (_now: DOMHighResTimeStamp, meta: VideoFrameCallbackMetadata): void => {
    if (stopped) return;
    // expectedDisplayTime is on the page clock; the capture clock is wall time.
    const shownAtMs = performance.timeOrigin + meta.expectedDisplayTime;
    tracker.onFrame(reader.read(video, meta.height), shownAtMs);
    handle = video.requestVideoFrameCallback(onFrame);
  };
  handle = video.requestVideoFrameCallback(onFrame);
  return () => {
    stopped = true;
    video.cancelVideoFrameCallback(handle);
  };
}
