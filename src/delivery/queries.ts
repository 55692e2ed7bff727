/** The read-model queries other capabilities use (the matching routes' `deliveriesOfMatch`). */
export { deliveriesOfMatch } from '../../projections/deliveries/queries.ts';
