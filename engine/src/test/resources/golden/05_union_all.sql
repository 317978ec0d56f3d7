-- UNION ALL of two inputs: each batch's rows leave as soon as that batch is pushed.
-- inputs: people, orders
SELECT 'person' AS kind, id, name AS label FROM people WHERE id <= 2
UNION ALL
SELECT 'order' AS kind, order_id AS id, CAST(amount AS VARCHAR) AS label FROM orders WHERE amount > 50
-- expected
{"kind":"person","id":1,"label":"Ada Lovelace"}
{"kind":"person","id":2,"label":"Alan Turing"}
{"kind":"order","id":101,"label":"1500.0"}
{"kind":"order","id":102,"label":"99.99"}
