// An order item's direction and its reverse (paging backwards reads the page in
// the reverse order). Its own module: the cursor's keyset condition and the
// order's SQL both flip directions, and the order's filters read cursors.
export type Direction = 'AscNullsFirst' | 'AscNullsLast' | 'DescNullsFirst' | 'DescNullsLast'

export const FLIP: Record<Direction, Direction> = {
  AscNullsFirst: 'DescNullsLast',
  AscNullsLast: 'DescNullsFirst',
  DescNullsFirst: 'AscNullsLast',
  DescNullsLast: 'AscNullsFirst',
}
