-- One operation of the tenant.
SELECT {{fragments/operation_columns}}
FROM operations WHERE id = :id AND app_id = :app_id
