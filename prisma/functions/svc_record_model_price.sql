-- Every list-price change, whoever makes it, appends to the history (model_prices): input, output, and the cache-read
-- and cache-write prices (issue 40).
CREATE OR REPLACE FUNCTION svc_record_model_price() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT'
     OR NEW.input_micro_diem_per_mtok IS DISTINCT FROM OLD.input_micro_diem_per_mtok
     OR NEW.output_micro_diem_per_mtok IS DISTINCT FROM OLD.output_micro_diem_per_mtok
     OR NEW.cache_read_micro_diem_per_mtok IS DISTINCT FROM OLD.cache_read_micro_diem_per_mtok
     OR NEW.cache_write_micro_diem_per_mtok IS DISTINCT FROM OLD.cache_write_micro_diem_per_mtok THEN
    INSERT INTO model_prices (model_id, input_micro_diem_per_mtok, output_micro_diem_per_mtok,
                              cache_read_micro_diem_per_mtok, cache_write_micro_diem_per_mtok, effective_from)
    VALUES (NEW.id, NEW.input_micro_diem_per_mtok, NEW.output_micro_diem_per_mtok,
            NEW.cache_read_micro_diem_per_mtok, NEW.cache_write_micro_diem_per_mtok, clock_timestamp());
  END IF;
  RETURN NEW;
END $$;
