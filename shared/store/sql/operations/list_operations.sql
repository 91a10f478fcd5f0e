-- A page of the tenant's operations in creation order (ids are UUIDv7), after :after, of one
-- state or any, along operations_app_idx; :limit is one more than the page, to say `next`.
SELECT {{fragments/operation_columns}}
FROM operations
WHERE app_id = :app_id AND id > :after AND (:state::text IS NULL OR state = :state::text)
ORDER BY app_id, id
LIMIT :limit
