BASE <http://example/base#>
PREFIX : <http://example/>
LOAD <http://example.org/faraway>
