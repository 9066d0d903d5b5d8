barrier\.arrive
barrier\.sync\s+1, 256
