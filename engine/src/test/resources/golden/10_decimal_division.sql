-- Decimal division keeps the digits its quotient needs, the last one rounded half away from
-- zero (arrow kept the dividend's scale plus 4 and cut the rest: 12.50 / 30000 was 0.000416).
-- inputs: orders
SELECT order_id,
       CAST(amount AS DECIMAL(10, 2)) / 3 AS third,
       CAST(amount AS DECIMAL(10, 2)) / 30000 AS tiny,
       order_id / CAST(7 AS DECIMAL(1, 0)) AS sevenths
FROM orders
-- expected
{"order_id":100,"third":4.166667,"tiny":0.00041667,"sevenths":14.285714}
{"order_id":101,"third":500.000000,"tiny":0.05000000,"sevenths":14.428571}
{"order_id":102,"third":33.330000,"tiny":0.00333300,"sevenths":14.571429}
