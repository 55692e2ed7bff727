// The w3c WebVTT parser and validator ships without types; this is the part the tests use.
declare module 'webvtt-parser' {
  export interface WebVTTCue {
    id: string;
    startTime: number;
    endTime: number;
    text: string;
  }
  export interface WebVTTParseError {
    message: string;
    line: number;
    col?: number;
  }
  export class WebVTTParser {
    parse(input: string, mode?: 'metadata' | 'chapters'): { cues: WebVTTCue[]; errors: WebVTTParseError[] };
  }
}
