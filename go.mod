module github.com/piweb/piweb

go 1.26.8
