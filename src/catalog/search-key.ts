import { fold } from '../../projections/entities/projection.ts';

/**
 * The form titles and queries are compared in: folded (lower case, accents dropped), every run of
 * characters other than letters and digits one space. "Café-Crème!" and "cafe creme" are equal.
 */
export const searchKey = (text: string) =>
  fold(text)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
