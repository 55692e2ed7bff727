/** The closed set of speaker roles (docs/alerts.md, Alert configuration). CO_HOST is accepted as input and folds into HOST. */
export const SPEAKER_ROLES = [
  'HOST',
  'GUEST',
  'PANELIST',
  'CORRESPONDENT',
  'CALLER',
  'LISTENER',
  'REPORTER',
  'INTERVIEWER',
  'NARRATOR',
  'ANNOUNCER',
  'COMMENTATOR',
  'PRODUCER',
  'ADVERTISER',
  'UNKNOWN',
] as const;

export type SpeakerRole = (typeof SPEAKER_ROLES)[number];

const ROLE_BY_INPUT: ReadonlyMap<string, SpeakerRole> = new Map<string, SpeakerRole>([
  ...SPEAKER_ROLES.map((role): [string, SpeakerRole] => [role, role]),
  ['CO_HOST', 'HOST'],
]);

/**
 * The stored role for a role argument: case-insensitive, surrounding whitespace ignored,
 * CO_HOST → HOST. Returns undefined for anything outside the closed set (the caller answers 422).
 */
export function normaliseSpeakerRole(input: unknown): SpeakerRole | undefined {
  if (typeof input !== 'string') return undefined;
  return ROLE_BY_INPUT.get(input.trim().toUpperCase());
}

/** The role of a transcript line or speaker as sent by a producer; absent or unrecognised is UNKNOWN. */
export function speakerRoleOrUnknown(input: unknown): SpeakerRole {
  return normaliseSpeakerRole(input) ?? 'UNKNOWN';
}

/**
 * A `speaker_roles` filter value: any role but HOST (hosts never match PODCAST_SPEAKER, so a
 * HOST or CO_HOST filter could never match). Undefined means the caller answers 422.
 */
export function normaliseSpeakerRoleFilter(input: unknown): Exclude<SpeakerRole, 'HOST'> | undefined {
  const role = normaliseSpeakerRole(input);
  return role === 'HOST' ? undefined : role;
}
