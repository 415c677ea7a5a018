module podnet.local/pause

go 1.22
