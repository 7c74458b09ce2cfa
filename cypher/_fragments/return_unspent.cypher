// needs: return_id
// instead: WITH *, false AS budget_returned
// A goal bound as `g` that this commit resolves gives what it has not spent back to its
// parent ($return_id: the event's id; null when the commit resolves nothing): a refund
// event charged to the parent and drawn from the goal, for money and time each, never
// below zero. The parent's reserve then pays what its other children or it still need
// before anyone is asked for more. Binds `budget_returned`: the parent's remaining
// budget changed, and with it every child's view of it.
OPTIONAL MATCH (g)-[:CHILD_OF]->(giver:Goal)
WITH *,
     CASE WHEN g.status = 'resolved' AND giver IS NOT NULL
          THEN g.cost_allocated + g.cost_refunded - g.cost_spent - g.cost_granted ELSE 0 END
       AS return_cost_raw,
     CASE WHEN g.status = 'resolved' AND giver IS NOT NULL
          THEN g.time_allocated + g.time_refunded - g.time_spent - g.time_granted ELSE 0 END
       AS return_time_raw
WITH *,
     CASE WHEN return_cost_raw > 0 THEN return_cost_raw ELSE 0 END AS return_cost,
     CASE WHEN return_time_raw > 0 THEN return_time_raw ELSE 0 END AS return_time
WITH *, return_cost > 0 OR return_time > 0 AS budget_returned
CALL {
  WITH g, giver, return_cost, return_time, budget_returned
  WITH g, giver, return_cost, return_time
  WHERE budget_returned
  SET giver.cost_refunded = giver.cost_refunded + return_cost,
      giver.time_refunded = giver.time_refunded + return_time,
      g.cost_granted = g.cost_granted + return_cost,
      g.time_granted = g.time_granted + return_time
  CREATE (back:BudgetEvent {id: $return_id, kind: 'refund', goal_id: giver.id, source_id: g.id,
                            cost: return_cost, time: return_time, seq: $seq,
                            description: 'unspent budget of a resolved subgoal',
                            caption: 'refund $' + toString(toInteger(floor(return_cost / 1000000.0))) + '.' +
                                     right('00000' + toString(return_cost - toInteger(floor(return_cost / 1000000.0)) * 1000000), 6)})
  CREATE (back)-[:CHARGED_TO]->(giver)
  CREATE (back)-[:DRAWN_FROM]->(g)
}
