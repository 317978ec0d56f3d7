-- Floats compared as PostgreSQL compares them: 0/0 is a NaN (with its sign bit set on x86),
-- equal to every NaN and above every number; -0.0 is 0 in a simple CASE too.
-- inputs: people
SELECT id,
       (score - 91.5) / (score - 91.5) < 0 AS ratio_below_zero,
       (score - 91.5) / (score - 91.5) = CAST('NaN' AS DOUBLE) AS ratio_is_nan,
       CASE -0.0 * score WHEN 0 THEN 'zero' ELSE 'other' END AS signed_zero
FROM people
-- expected
{"id":1,"ratio_below_zero":false,"ratio_is_nan":true,"signed_zero":"zero"}
{"id":2,"ratio_below_zero":false,"ratio_is_nan":false,"signed_zero":"zero"}
{"id":3,"ratio_below_zero":null,"ratio_is_nan":null,"signed_zero":"other"}
{"id":4,"ratio_below_zero":false,"ratio_is_nan":false,"signed_zero":"zero"}
{"id":5,"ratio_below_zero":false,"ratio_is_nan":false,"signed_zero":"zero"}
